/**
 * The sample catalogue `plantstore plants seed` loads: real plant names (botanical, with a common
 * name where there is a well-known one), grouped by the tag each gets. Ids follow this order, so a
 * seed gives the same plants every time and a second seed changes nothing.
 */
const CATALOGUE: Readonly<Record<string, readonly string[]>> = {
  houseplant: [
    'Monstera deliciosa', 'Monstera adansonii', 'Philodendron hederaceum', 'Philodendron bipinnatifidum',
    'Philodendron erubescens', 'Epipremnum aureum (pothos)', 'Scindapsus pictus', 'Ficus elastica (rubber plant)',
    'Ficus lyrata (fiddle-leaf fig)', 'Ficus benjamina (weeping fig)', 'Ficus pumila', 'Dracaena marginata',
    'Dracaena fragrans', 'Dracaena trifasciata (snake plant)', 'Zamioculcas zamiifolia (ZZ plant)',
    'Spathiphyllum wallisii (peace lily)', 'Chlorophytum comosum (spider plant)', 'Calathea orbifolia',
    'Goeppertia makoyana (peacock plant)', 'Maranta leuconeura (prayer plant)', 'Stromanthe sanguinea',
    'Ctenanthe burle-marxii', 'Aglaonema commutatum', 'Dieffenbachia seguine', 'Anthurium andraeanum',
    'Alocasia amazonica', 'Alocasia zebrina', 'Colocasia esculenta', 'Syngonium podophyllum', 'Peperomia obtusifolia',
    'Peperomia argyreia (watermelon peperomia)', 'Peperomia caperata', 'Pilea peperomioides (Chinese money plant)',
    'Pilea cadierei', 'Hoya carnosa (wax plant)', 'Hoya kerrii', 'Hoya pubicalyx', 'Tradescantia zebrina',
    'Tradescantia pallida', 'Fittonia albivenis (nerve plant)', 'Hypoestes phyllostachya (polka dot plant)',
    'Aspidistra elatior (cast-iron plant)', 'Chamaedorea elegans (parlour palm)', 'Dypsis lutescens (areca palm)',
    'Howea forsteriana (kentia palm)', 'Rhapis excelsa', 'Beaucarnea recurvata (ponytail palm)',
    'Schefflera arboricola', 'Fatsia japonica', 'Hedera helix (English ivy)', 'Cissus rhombifolia',
    'Begonia maculata', 'Begonia rex', 'Saintpaulia ionantha (African violet)', 'Streptocarpus saxorum',
    'Oxalis triangularis', 'Plectranthus verticillatus', 'Ceropegia woodii (string of hearts)',
    'Dischidia nummularia', 'Rhaphidophora tetrasperma', 'Asparagus setaceus', 'Polyscias fruticosa',
  ],
  succulent: [
    'Aloe vera', 'Aloe aristata', 'Haworthiopsis attenuata (zebra plant)', 'Haworthia cooperi', 'Gasteria bicolor',
    'Echeveria elegans', 'Echeveria agavoides', "Echeveria 'Perle von Nürnberg'", 'Crassula ovata (jade plant)',
    'Crassula perforata', 'Crassula muscosa', 'Sedum morganianum (burro\u2019s tail)', 'Sedum rubrotinctum',
    'Curio rowleyanus (string of pearls)', 'Curio radicans', 'Kalanchoe blossfeldiana', 'Kalanchoe tomentosa',
    'Kalanchoe daigremontiana', 'Graptopetalum paraguayense', 'Pachyphytum oviferum', 'Sempervivum tectorum',
    'Aeonium arboreum', "Aeonium 'Zwartkop'", 'Agave americana', 'Agave victoriae-reginae', 'Lithops lesliei',
    'Faucaria tigrina', 'Portulacaria afra', 'Euphorbia milii (crown of thorns)', 'Euphorbia trigona',
    'Adenium obesum (desert rose)', 'Senecio serpens', 'Sansevieria cylindrica', 'Delosperma cooperi',
  ],
  cactus: [
    'Schlumbergera truncata (Christmas cactus)', 'Opuntia microdasys (bunny ears)', 'Opuntia ficus-indica',
    'Mammillaria elongata', 'Mammillaria hahniana', 'Echinocactus grusonii (golden barrel)', 'Ferocactus latispinus',
    'Cereus peruvianus', 'Carnegiea gigantea (saguaro)', 'Astrophytum asterias', 'Gymnocalycium mihanovichii',
    'Rebutia minuscula', 'Cleistocactus strausii', 'Epiphyllum oxypetalum', 'Rhipsalis baccifera',
    'Hylocereus undatus (dragon fruit)', 'Espostoa lanata', 'Parodia magnifica', 'Echinopsis oxygona',
    'Lophophora williamsii',
  ],
  herb: [
    'Ocimum basilicum (basil)', 'Ocimum tenuiflorum (holy basil)', 'Mentha spicata (spearmint)',
    'Mentha × piperita (peppermint)', 'Petroselinum crispum (parsley)', 'Coriandrum sativum (coriander)',
    'Anethum graveolens (dill)', 'Thymus vulgaris (thyme)', 'Salvia rosmarinus (rosemary)', 'Salvia officinalis (sage)',
    'Origanum vulgare (oregano)', 'Origanum majorana (marjoram)', 'Allium schoenoprasum (chives)',
    'Melissa officinalis (lemon balm)', 'Artemisia dracunculus (tarragon)', 'Levisticum officinale (lovage)',
    'Laurus nobilis (bay laurel)', 'Foeniculum vulgare (fennel)', 'Satureja hortensis (summer savory)',
    'Cymbopogon citratus (lemongrass)', 'Aloysia citrodora (lemon verbena)', 'Borago officinalis (borage)',
    'Matricaria chamomilla (chamomile)', 'Stevia rebaudiana', 'Hyssopus officinalis (hyssop)',
    'Anthriscus cerefolium (chervil)', 'Rumex acetosa (sorrel)', 'Nepeta cataria (catnip)',
  ],
  vegetable: [
    'Solanum lycopersicum (tomato)', 'Solanum melongena (aubergine)', 'Solanum tuberosum (potato)',
    'Capsicum annuum (sweet pepper)', 'Capsicum chinense (habanero)', 'Cucumis sativus (cucumber)',
    'Cucurbita pepo (courgette)', 'Cucurbita maxima (winter squash)', 'Phaseolus vulgaris (French bean)',
    'Phaseolus coccineus (runner bean)', 'Pisum sativum (pea)', 'Vicia faba (broad bean)', 'Daucus carota (carrot)',
    'Beta vulgaris (beetroot)', 'Beta vulgaris subsp. cicla (chard)', 'Spinacia oleracea (spinach)',
    'Lactuca sativa (lettuce)', 'Brassica oleracea (kale)', 'Brassica oleracea var. italica (broccoli)',
    'Brassica rapa (pak choi)', 'Raphanus sativus (radish)', 'Allium cepa (onion)', 'Allium sativum (garlic)',
    'Allium porrum (leek)', 'Zea mays (sweetcorn)', 'Cynara cardunculus (artichoke)', 'Asparagus officinalis',
    'Apium graveolens (celery)', 'Pastinaca sativa (parsnip)', 'Eruca vesicaria (rocket)',
  ],
  fern: [
    'Nephrolepis exaltata (Boston fern)', 'Adiantum raddianum (maidenhair fern)', 'Asplenium nidus (bird\u2019s nest fern)',
    'Platycerium bifurcatum (staghorn fern)', 'Pteris cretica', 'Davallia fejeensis (rabbit\u2019s foot fern)',
    'Phlebodium aureum (blue star fern)', 'Polystichum munitum (sword fern)', 'Dryopteris filix-mas (male fern)',
    'Athyrium filix-femina (lady fern)', 'Osmunda regalis (royal fern)', 'Matteuccia struthiopteris (ostrich fern)',
    'Dicksonia antarctica (tree fern)', 'Cyrtomium falcatum (holly fern)', 'Blechnum spicant',
  ],
  flower: [
    'Rosa gallica', 'Rosa rugosa', 'Lavandula angustifolia (lavender)', 'Helianthus annuus (sunflower)',
    'Tulipa gesneriana (tulip)', 'Narcissus pseudonarcissus (daffodil)', 'Hyacinthus orientalis (hyacinth)',
    'Crocus vernus', 'Galanthus nivalis (snowdrop)', 'Iris germanica', 'Lilium candidum (Madonna lily)',
    'Paeonia lactiflora (peony)', 'Dahlia pinnata', 'Tagetes erecta (marigold)', 'Calendula officinalis',
    'Zinnia elegans', 'Cosmos bipinnatus', 'Antirrhinum majus (snapdragon)', 'Digitalis purpurea (foxglove)',
    'Delphinium elatum', 'Lupinus polyphyllus (lupin)', 'Papaver rhoeas (corn poppy)', 'Echinacea purpurea',
    'Rudbeckia hirta (black-eyed Susan)', 'Leucanthemum vulgare (ox-eye daisy)', 'Bellis perennis (daisy)',
    'Viola tricolor (heartsease)', 'Primula vulgaris (primrose)', 'Dianthus caryophyllus (carnation)',
    'Pelargonium zonale (geranium)', 'Fuchsia magellanica', 'Petunia × atkinsiana', 'Impatiens walleriana',
    'Cyclamen persicum', 'Phalaenopsis amabilis (moth orchid)', 'Cymbidium eburneum', 'Dendrobium nobile',
    'Gerbera jamesonii', 'Chrysanthemum morifolium', 'Hemerocallis fulva (daylily)', 'Agapanthus africanus',
    'Alstroemeria aurea', 'Zantedeschia aethiopica (calla lily)', 'Convallaria majalis (lily of the valley)',
    'Aquilegia vulgaris (columbine)', 'Geranium sanguineum', 'Salvia nemorosa', 'Verbena bonariensis',
  ],
  shrub: [
    'Hydrangea macrophylla', 'Hydrangea paniculata', 'Buxus sempervirens (box)', 'Rhododendron ponticum',
    'Camellia japonica', 'Syringa vulgaris (lilac)', 'Forsythia × intermedia', 'Buddleja davidii (butterfly bush)',
    'Philadelphus coronarius (mock orange)', 'Viburnum opulus (guelder rose)', 'Cornus alba', 'Hibiscus syriacus',
    'Hibiscus rosa-sinensis', 'Gardenia jasminoides', 'Nerium oleander', 'Pieris japonica', 'Skimmia japonica',
    'Ilex aquifolium (holly)', 'Euonymus fortunei', 'Photinia × fraseri', 'Berberis thunbergii', 'Ribes nigrum (blackcurrant)',
    'Vaccinium corymbosum (blueberry)', 'Rubus idaeus (raspberry)', 'Sambucus nigra (elder)', 'Cotoneaster horizontalis',
  ],
  tree: [
    'Quercus robur (English oak)', 'Quercus ilex (holm oak)', 'Fagus sylvatica (beech)', 'Betula pendula (silver birch)',
    'Acer palmatum (Japanese maple)', 'Acer saccharum (sugar maple)', 'Fraxinus excelsior (ash)',
    'Tilia cordata (small-leaved lime)', 'Prunus avium (wild cherry)', 'Prunus serrulata (Japanese cherry)',
    'Malus domestica (apple)', 'Pyrus communis (pear)', 'Citrus × limon (lemon)', 'Citrus × sinensis (orange)',
    'Olea europaea (olive)', 'Ficus carica (fig)', 'Juglans regia (walnut)', 'Castanea sativa (sweet chestnut)',
    'Aesculus hippocastanum (horse chestnut)', 'Ginkgo biloba', 'Magnolia grandiflora', 'Magnolia × soulangeana',
    'Sorbus aucuparia (rowan)', 'Salix babylonica (weeping willow)', 'Populus tremula (aspen)', 'Platanus × hispanica (London plane)',
    'Pinus sylvestris (Scots pine)', 'Picea abies (Norway spruce)', 'Abies nordmanniana (Nordmann fir)',
    'Larix decidua (larch)', 'Taxus baccata (yew)', 'Sequoiadendron giganteum (giant sequoia)',
    'Cedrus libani (cedar of Lebanon)', 'Eucalyptus globulus', 'Jacaranda mimosifolia', 'Cercis siliquastrum (Judas tree)',
  ],
  grass: [
    'Miscanthus sinensis', 'Pennisetum alopecuroides', 'Festuca glauca (blue fescue)', 'Stipa tenuissima',
    'Calamagrostis × acutiflora', 'Carex oshimensis', 'Hakonechloa macra', 'Briza media (quaking grass)',
    'Cortaderia selloana (pampas grass)', 'Phyllostachys nigra (black bamboo)', 'Fargesia murielae', 'Ophiopogon japonicus',
  ],
  climber: [
    'Clematis montana', 'Clematis armandii', 'Wisteria sinensis', 'Lonicera periclymenum (honeysuckle)',
    'Jasminum officinale (jasmine)', 'Trachelospermum jasminoides (star jasmine)', 'Parthenocissus quinquefolia (Virginia creeper)',
    'Passiflora caerulea (passion flower)', 'Lathyrus odoratus (sweet pea)', 'Ipomoea purpurea (morning glory)',
    'Bougainvillea glabra', 'Vitis vinifera (grape vine)', 'Humulus lupulus (hop)', 'Hydrangea anomala subsp. petiolaris',
  ],
  carnivorous: [
    'Dionaea muscipula (Venus flytrap)', 'Drosera capensis (Cape sundew)', 'Sarracenia purpurea (pitcher plant)',
    'Nepenthes alata', 'Pinguicula moranensis (butterwort)', 'Utricularia gibba (bladderwort)', 'Cephalotus follicularis',
    'Darlingtonia californica (cobra lily)',
  ],
};

export interface SamplePlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag: string;
}

/** Every sample plant, ids from `firstId` on, in the catalogue's order. */
export function samplePlants(firstId: bigint): SamplePlant[] {
  const plants: SamplePlant[] = [];
  for (const [tag, names] of Object.entries(CATALOGUE))
    for (const name of names) plants.push({ id: firstId + BigInt(plants.length), name, tag });
  return plants;
}
